/**
 * Markdown to HTML for the chat: markdown-it with raw HTML off (the model's text can never
 * inject markup) and highlight.js for fenced code, with a small set of common languages.
 */
import MarkdownIt from "markdown-it";
import hljs from "highlight.js/lib/core";
import bash from "highlight.js/lib/languages/bash";
import c from "highlight.js/lib/languages/c";
import cpp from "highlight.js/lib/languages/cpp";
import css from "highlight.js/lib/languages/css";
import diff from "highlight.js/lib/languages/diff";
import go from "highlight.js/lib/languages/go";
import java from "highlight.js/lib/languages/java";
import javascript from "highlight.js/lib/languages/javascript";
import json from "highlight.js/lib/languages/json";
import markdown from "highlight.js/lib/languages/markdown";
import python from "highlight.js/lib/languages/python";
import rust from "highlight.js/lib/languages/rust";
import shell from "highlight.js/lib/languages/shell";
import sql from "highlight.js/lib/languages/sql";
import typescript from "highlight.js/lib/languages/typescript";
import xml from "highlight.js/lib/languages/xml";
import yaml from "highlight.js/lib/languages/yaml";

const languages = {
  bash, c, cpp, css, diff, go, java, javascript, json, markdown, python, rust, shell, sql,
  typescript, xml, yaml,
};
for (const [name, language] of Object.entries(languages)) hljs.registerLanguage(name, language);
hljs.registerAliases(["sh", "zsh", "console"], { languageName: "bash" });
hljs.registerAliases(["js", "jsx", "mjs"], { languageName: "javascript" });
hljs.registerAliases(["ts", "tsx"], { languageName: "typescript" });
hljs.registerAliases(["py"], { languageName: "python" });
hljs.registerAliases(["html", "svg"], { languageName: "xml" });
hljs.registerAliases(["yml"], { languageName: "yaml" });
hljs.registerAliases(["rs"], { languageName: "rust" });

/** Code blocks longer than this are shown without highlighting (it costs too much). */
const HIGHLIGHT_LIMIT = 20_000;

const md: MarkdownIt = new MarkdownIt({
  html: false,
  linkify: true,
  breaks: false,
  highlight(code: string, lang: string): string {
    const name = lang.trim().split(/\s+/)[0]?.toLowerCase() ?? "";
    if (name && hljs.getLanguage(name) && code.length <= HIGHLIGHT_LIMIT) {
      try {
        const html = hljs.highlight(code, { language: name, ignoreIllegals: true }).value;
        return `<pre class="code"><code class="hljs language-${md.utils.escapeHtml(name)}">${html}</code></pre>`;
      } catch {
        // Fall through to plain.
      }
    }
    return `<pre class="code"><code class="hljs">${md.utils.escapeHtml(code)}</code></pre>`;
  },
});

// Links open through VS Code (the webview blocks navigation); mark them for the click handler.
md.validateLink = (url: string) => /^(https?:|mailto:|#)/i.test(url.trim());

export function renderMarkdown(text: string): string {
  return md.render(text);
}

/**
 * The end of the longest prefix of `text` (from `from`) that is complete Markdown blocks:
 * just after a blank line that is not inside a fenced code block. -1 if none.
 */
export function stableBoundary(text: string, from: number, fenceOpenAtFrom: boolean): { end: number; fenceOpen: boolean } {
  let fenceOpen = fenceOpenAtFrom;
  let lastEnd = -1;
  let lastFence = fenceOpen;
  let lineStart = from;
  while (lineStart < text.length) {
    const nl = text.indexOf("\n", lineStart);
    if (nl < 0) break; // The last line is still being written.
    const line = text.slice(lineStart, nl);
    const trimmed = line.trimStart();
    if (trimmed.startsWith("```") || trimmed.startsWith("~~~")) fenceOpen = !fenceOpen;
    else if (!fenceOpen && trimmed === "" && lineStart > from) {
      lastEnd = nl + 1;
      lastFence = fenceOpen;
    }
    lineStart = nl + 1;
  }
  return { end: lastEnd, fenceOpen: lastFence };
}
