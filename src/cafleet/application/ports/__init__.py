"""The ports the services depend on, as typing.Protocol, one module per other side.

Nothing is re-exported here: a module imports the ports it uses from their side."""
