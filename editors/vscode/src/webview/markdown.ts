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
const HIGHLIGHT_LIMIT = 8_000;

/** While set, code blocks are left plain and marked for `highlightCode` (see renderMarkdown). */
let deferHighlight = false;

const md: MarkdownIt = new MarkdownIt({
  html: false,
  linkify: true,
  breaks: false,
  highlight(code: string, lang: string): string {
    const name = lang.trim().split(/\s+/)[0]?.toLowerCase() ?? "";
    const known = name !== "" && hljs.getLanguage(name) !== undefined && code.length <= HIGHLIGHT_LIMIT;
    const escaped = md.utils.escapeHtml(code);
    if (!known) return `<pre class="code"><code class="hljs">${escaped}</code></pre>`;
    const cls = `hljs language-${md.utils.escapeHtml(name)}`;
    if (deferHighlight) return `<pre class="code"><code class="${cls}" data-highlight="${md.utils.escapeHtml(name)}">${escaped}</code></pre>`;
    try {
      return `<pre class="code"><code class="${cls}">${hljs.highlight(code, { language: name, ignoreIllegals: true }).value}</code></pre>`;
    } catch {
      return `<pre class="code"><code class="${cls}">${escaped}</code></pre>`;
    }
  },
});

// Links open through VS Code (the webview blocks navigation); mark them for the click handler.
md.validateLink = (url: string) => /^(https?:|mailto:|#)/i.test(url.trim());

/**
 * Markdown to HTML. With `lazy`, code blocks come out plain, marked `data-highlight`, for
 * `highlightCode` to colour when they are on screen (highlighting is the costly part).
 */
export function renderMarkdown(text: string, lazy = false): string {
  deferHighlight = lazy;
  try {
    return md.render(text);
  } finally {
    deferHighlight = false;
  }
}

/** Colour one code element that `renderMarkdown(text, true)` left plain. */
export function highlightCode(code: HTMLElement): void {
  const language = code.dataset.highlight;
  if (!language) return;
  delete code.dataset.highlight;
  try {
    code.innerHTML = hljs.highlight(code.textContent ?? "", { language, ignoreIllegals: true }).value;
  } catch {
    // Stays plain.
  }
}

/**
 * The end of the next complete Markdown block of `text` after `from`: just after the first
 * blank line that is not inside a fenced code block. `end` is -1 when the block is still
 * being written; `fenceOpen` is the fence state at `end`.
 */
export function nextBoundary(
  text: string,
  from: number,
  fenceOpenAtFrom: boolean,
): { end: number; fenceOpen: boolean } {
  let fenceOpen = fenceOpenAtFrom;
  let lineStart = from;
  while (lineStart < text.length) {
    const nl = text.indexOf("\n", lineStart);
    if (nl < 0) break; // The last line is still being written.
    const trimmed = text.slice(lineStart, nl).trimStart();
    if (trimmed.startsWith("```") || trimmed.startsWith("~~~")) fenceOpen = !fenceOpen;
    else if (!fenceOpen && trimmed === "" && lineStart > from) return { end: nl + 1, fenceOpen };
    lineStart = nl + 1;
  }
  return { end: -1, fenceOpen };
}
