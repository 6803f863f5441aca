"""`cafleet message <verb>` as the CLI integration tests run it."""

from __future__ import annotations


class Messages:
    """`cafleet message <verb> --fleet-id F ...` for one fleet."""

    def __init__(self, cli, fleet):
        self.cli = cli
        self.fleet = fleet
        self.fid = str(fleet.fleet_id)

    def args(self, verb, agent, *rest):
        return ("message", verb, "--fleet-id", self.fid, "--agent-id", str(agent), *map(str, rest))

    def run(self, verb, agent, *rest, **kw):
        return self.cli(*self.args(verb, agent, *rest), **kw)

    def ok(self, verb, agent, *rest, **kw):
        return self.cli.ok(*self.args(verb, agent, *rest), **kw)

    def json(self, verb, agent, *rest, **kw):
        return self.cli.json(*self.args(verb, agent, *rest), **kw)

    def fails(self, verb, agent, *rest, **kw):
        return self.cli.fails(*self.args(verb, agent, *rest), **kw)

    def send(self, sender, to, text, *extra):
        """Send and return the new task id."""
        return int(self.ok("send", sender, "--to", to, "--text", text, "--quiet", *extra))
