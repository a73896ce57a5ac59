/**
 * What a file edit tool (Edit, MultiEdit, Write) would leave on disk: computed from the
 * tool's input and the file as it is now, for VS Code's native diff editor. No `vscode`
 * import: tests run it in Node.
 */
import { readFile } from "node:fs/promises";

export const EDIT_TOOLS = new Set(["Edit", "MultiEdit", "Write"]);

export interface ProposedChange {
  filePath: string;
  /** The file now ("" when it does not exist yet). */
  before: string;
  /** The file after the tool ran. */
  after: string;
  exists: boolean;
}

interface EditSpec {
  old_string: string;
  new_string: string;
  replace_all?: boolean;
}

function applyEdit(text: string, edit: EditSpec): string {
  if (edit.old_string === "") return edit.new_string + text;
  if (edit.replace_all) return text.split(edit.old_string).join(edit.new_string);
  const at = text.indexOf(edit.old_string);
  if (at < 0) throw new Error("the text to replace is not in the file (it changed since?)");
  return text.slice(0, at) + edit.new_string + text.slice(at + edit.old_string.length);
}

/** The change `toolName` with `input` would make, or an error saying why it cannot be shown. */
export async function proposedChange(
  toolName: string,
  input: Record<string, unknown>,
): Promise<ProposedChange> {
  const filePath = input.file_path;
  if (typeof filePath !== "string") throw new Error(`${toolName} has no file_path`);
  let before = "";
  let exists = true;
  try {
    before = await readFile(filePath, "utf8");
  } catch {
    exists = false;
  }
  let after: string;
  switch (toolName) {
    case "Write":
      after = String(input.content ?? "");
      break;
    case "Edit":
      after = applyEdit(before, input as unknown as EditSpec);
      break;
    case "MultiEdit": {
      const edits = Array.isArray(input.edits) ? (input.edits as EditSpec[]) : [];
      after = edits.reduce(applyEdit, before);
      break;
    }
    default:
      throw new Error(`${toolName} does not edit files`);
  }
  return { filePath, before, after, exists };
}
