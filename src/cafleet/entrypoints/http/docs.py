"""The API reference at /docs: FastAPI's Swagger UI page on the Swagger UI files of the
package (copied from swagger-ui-dist by the WebUI build), so it works without internet.

The page and its files are outside /api and carry no token, as the schema at /openapi.json
does: they describe the API and can do nothing with it without the token.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter, HTTPException
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import FileResponse, HTMLResponse

DOCS_PATH = "/docs"
ASSETS_PATH = "/swagger"
SWAGGER_FILES = ("swagger-ui-bundle.js", "swagger-ui.css", "favicon-32x32.png")


def docs_router(swagger_files: Path, *, title: str, openapi_url: str) -> APIRouter:
    router = APIRouter(include_in_schema=False)

    @router.get(DOCS_PATH)
    def swagger_ui() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url=openapi_url,
            title=f"{title} - API reference",
            swagger_js_url=f"{ASSETS_PATH}/swagger-ui-bundle.js",
            swagger_css_url=f"{ASSETS_PATH}/swagger-ui.css",
            swagger_favicon_url=f"{ASSETS_PATH}/favicon-32x32.png",
            swagger_ui_parameters={"validatorUrl": None},  # the validator badge is online
        )

    @router.get(ASSETS_PATH + "/{name}")
    def swagger_file(name: str) -> FileResponse:
        path = swagger_files / name
        if name not in SWAGGER_FILES or not path.is_file():
            raise HTTPException(404, "Not Found")
        return FileResponse(path)

    return router
