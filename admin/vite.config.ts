import { defineConfig } from "vitest/config";
import { mockApi } from "./mock/plugin";

// The build lands inside the Python package, which serves it at `/` and ships it in the wheel.
export default defineConfig(({ mode }) => ({
  base: "/",
  esbuild: { jsx: "automatic", jsxImportSource: "preact" },
  plugins: mode === "mock" ? [mockApi()] : [],
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
