// FTS5 query syntax shared by the stores and the search plan.

/** `text` as one FTS5 string (a token, or a phrase of its tokens): never read as syntax. */
export const ftsQuote = (text: string): string => `"${text.replace(/"/g, '""')}"`;
