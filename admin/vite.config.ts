import { readFileSync } from "node:fs";
import type { Plugin } from "vite";
import { defineConfig } from "vitest/config";
import { mockApi } from "./mock/plugin";

// Swagger UI for the API reference at /docs, copied from swagger-ui-dist into the build so
// the page works offline (FastAPI's default loads it from a CDN). The source map comments are
// dropped: the maps are not shipped.
const SWAGGER_FILES = ["swagger-ui-bundle.js", "swagger-ui.css", "favicon-32x32.png", "LICENSE", "NOTICE"];

function swaggerUiAssets(): Plugin {
  return {
    name: "cafleet-swagger-ui-assets",
    apply: "build",
    generateBundle() {
      for (const name of SWAGGER_FILES) {
        const raw = readFileSync(new URL(`./node_modules/swagger-ui-dist/${name}`, import.meta.url));
        const source = /\.(js|css)$/.test(name)
          ? raw.toString("utf8").replace(/\n?\/[/*]# sourceMappingURL=\S+?(?: \*\/)?\s*$/, "\n")
          : raw;
        this.emitFile({ type: "asset", fileName: `swagger/${name}`, source });
      }
    },
  };
}

// The build lands inside the Python package, which serves it at `/` and ships it in the wheel.
export default defineConfig(({ mode }) => ({
  base: "/",
  esbuild: { jsx: "automatic", jsxImportSource: "preact" },
  plugins: mode === "mock" ? [mockApi()] : [swaggerUiAssets()],
  build: {
    outDir: "../src/cafleet/webui",
    emptyOutDir: true,
    target: "es2022",
    sourcemap: false,
  },
  server: {
    host: "127.0.0.1",
    port: 5173,
    // `npm run dev` talks to a running `cafleet server` (default port 8000).
    proxy:
      mode === "mock"
        ? {}
        : { "/api": { target: process.env.CAFLEET_API ?? "http://127.0.0.1:8000" } },
  },
  test: {
    environment: "node",
    include: ["src/**/*.test.{ts,tsx}"],
  },
}));
