// Bundle the extension (Node, CommonJS, `vscode` external), the webview script (browser)
// and the Node tests with esbuild.   node scripts/build.mjs [--watch]
import { build } from "esbuild";
import { readdirSync } from "node:fs";

const common = { bundle: true, sourcemap: true, logLevel: "warning", target: "es2022" };

await Promise.all([
  build({
    ...common,
    entryPoints: ["src/extension.ts"],
    outfile: "dist/extension.js",
    platform: "node",
    format: "cjs",
    external: ["vscode"],
  }),
  build({
    ...common,
    entryPoints: ["src/webview/main.ts"],
    outfile: "dist/webview.js",
    platform: "browser",
    format: "iife",
    minify: true,
  }),
  build({
    ...common,
    entryPoints: readdirSync("test")
      .filter((f) => f.endsWith(".test.ts"))
      .map((f) => `test/${f}`),
    outdir: "out/test",
    platform: "node",
    format: "esm",
    outExtension: { ".js": ".mjs" },
    banner: { js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);" },
  }),
]);
