/**
 * The `session/history` contract (issue 12). Re-exported from the generated wire types
 * once the bridge's schema carries them; until then the contract's shape, as agreed.
 */
export interface HistoryParams {
  cwd: string;
  limit?: number | null;
  offset?: number;
}

export interface HistoryEntry {
  claudeSessionId: string;
  title: string;
  customTitle?: string | null;
  summary?: string | null;
  firstPrompt?: string | null;
  createdAt?: number | null;
  lastModified: number;
  messageCount: number;
  gitBranch?: string | null;
  cwd?: string | null;
  fileSize?: number | null;
  liveSessionId?: string | null;
}

export interface HistoryResult {
  conversations: HistoryEntry[];
  total: number;
}
