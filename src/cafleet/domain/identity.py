"""A member's proof of identity: a per-member secret in its pane's environment.

`member create` draws the secret, hands it to the member only through its private launch
file (never a command line, never typed) and stores only its digest. A command run with
the secret may act only as that member, and only if the secret matches the digest. Any
process of the same user can read another's environment, so this stops a member claiming
another id by mistake or because a message told it to, not a determined local process.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from cafleet.domain.digests import same_text, sha256_hex
from cafleet.domain.errors import Invalid

SECRET_VARIABLE = "CAFLEET_MEMBER_SECRET"
AGENT_VARIABLE = "CAFLEET_AGENT_ID"
_DIGEST_SCHEME = "sha256:"  # the secret has 256 random bits: a plain hash cannot be guessed


def new_secret() -> str:
    import secrets  # only `member create` draws one

    return secrets.token_urlsafe(32)


def secret_digest(secret: str) -> str:
    raw = secret.encode("utf-8", "surrogateescape")
    return _DIGEST_SCHEME + sha256_hex(raw)


@dataclass(frozen=True)
class MemberCredential:
    """What a member pane's environment claims: its agent id and its secret."""

    agent_id: int
    secret: str = field(repr=False)

    def matches(self, digest: str | None) -> bool:
        return digest is not None and same_text(secret_digest(self.secret), digest)

    def refuse_other(self, agent_id: int) -> None:
        """A member pane acts only as its own member."""
        if agent_id != self.agent_id:
            raise Invalid(
                f"this pane belongs to agent {self.agent_id}; it cannot act as agent {agent_id}."
            )

    def require_match(self, digest: str | None) -> None:
        if not self.matches(digest):
            raise Invalid(
                f"the member secret of this pane ({SECRET_VARIABLE}) does not verify"
                f" as agent {self.agent_id}."
            )
