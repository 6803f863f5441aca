"""The X-Fleet-Id header: every route except GET /api/fleets works inside one fleet."""

from __future__ import annotations

import re
from typing import Annotated

from fastapi import Depends, Header, HTTPException, Request

from cafleet.application.admin.service import AdminService
from cafleet.domain.bounds import ID

FLEET_HEADER = "X-Fleet-Id"
_INTEGER = re.compile(r"[+-]?[0-9]+")


def admin_service(request: Request) -> AdminService:
    service: AdminService = request.app.state.admin
    return service


Admin = Annotated[AdminService, Depends(admin_service)]

FleetHeader = Annotated[
    str,
    Header(
        alias=FLEET_HEADER,
        description=f"The fleet to work in (required; {ID.phrase})",
    ),
]


def _fleet_id(raw: str) -> int:
    value = raw.strip()
    if not value:
        raise HTTPException(400, f"{FLEET_HEADER} header required")
    if not _INTEGER.fullmatch(value):
        raise HTTPException(400, f"{FLEET_HEADER} must be an integer")
    try:
        return ID.parse_int(value)
    except ValueError:
        raise HTTPException(400, f"{FLEET_HEADER} must be {ID.phrase}") from None


def readable_fleet(admin: Admin, x_fleet_id: FleetHeader = "") -> int:
    """Any existing fleet, deleted ones included: history stays readable."""
    fleet_id = _fleet_id(x_fleet_id)
    admin.fleet(fleet_id)
    return fleet_id


def writable_fleet(admin: Admin, x_fleet_id: FleetHeader = "") -> int:
    """A live fleet: a deleted one answers 409 (read-only), an unknown one 404."""
    fleet_id = _fleet_id(x_fleet_id)
    admin.fleet(fleet_id, writable=True)
    return fleet_id


ReadableFleet = Annotated[int, Depends(readable_fleet)]
WritableFleet = Annotated[int, Depends(writable_fleet)]
