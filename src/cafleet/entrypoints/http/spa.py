"""The single-page app's production build, served at / with an SPA fallback.

A path that names a file of the build serves that file; any other path outside
/api/ and /ui/ serves index.html so hash-less deep links still load the app.
Unknown /api/ paths stay JSON 404s. Without a build, / explains how to make one.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from fastapi import APIRouter, HTTPException
from fastapi.responses import FileResponse, HTMLResponse, Response

MISSING_BUILD_PAGE = """<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>CAFleet Admin</title></head>
<body>
<h1>CAFleet Admin</h1>
<p>The web UI build is missing: <code>cafleet/webui/index.html</code> was not found in the
installed package. The JSON API still works under <a href="/api/fleets">/api</a>
(reference at <a href="/docs">/docs</a>).</p>
</body>
</html>
"""

_NO_CACHE = {"Cache-Control": "no-cache"}  # index.html names the hashed assets of a build


def bundled_build() -> Path:
    """src/cafleet/webui inside the installed package (an editable install included)."""
    return Path(str(files("cafleet"))) / "webui"


def spa_router(build: Path) -> APIRouter:
    router = APIRouter(include_in_schema=False)
    root = build.resolve()

    @router.get("/{path:path}")
    def single_page_app(path: str) -> Response:
        if path == "api" or path.startswith(("api/", "ui/")) or path == "ui":
            raise HTTPException(404, "Not Found")
        asset = _asset(root, path)
        if asset is not None:
            return FileResponse(asset)
        index = root / "index.html"
        if index.is_file():
            return FileResponse(index, headers=_NO_CACHE)
        return HTMLResponse(MISSING_BUILD_PAGE, headers=_NO_CACHE)

    return router


def _asset(root: Path, path: str) -> Path | None:
    """A file of the build named by path; nothing outside the build, however spelled."""
    if not path or "\x00" in path:
        return None
    try:
        candidate = (root / path).resolve()
    except (OSError, ValueError):
        return None
    if candidate.is_relative_to(root) and candidate.is_file():
        return candidate
    return None
