"""The way of a message: the service, its queue, the channel ladder, receipts, search."""
