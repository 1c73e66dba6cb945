// One recording as a Markdown note for `reclib export --format markdown`: YAML front matter
// (Obsidian reads it as the note's properties), then the title, summary and transcript as text.
import type { RecordingRow } from '../services/recording-model';

/**
 * A YAML double-quoted scalar. JSON's string syntax is a subset of YAML's double-quoted style, so
 * JSON.stringify is the base; on top of it the characters YAML treats as line breaks or forbids
 * unescaped (NEL, LINE/PARAGRAPH SEPARATOR, BOM, C1 controls, DEL) are escaped too. Quoting every
 * string also keeps titles such as `yes`, `null`, `1e3` or `- a` strings.
 */
export function yamlString(s: string): string {
  return JSON.stringify(s).replace(/[\u007f-\u009f\u2028\u2029\ufeff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

const iso = (ms: number): string => new Date(ms).toISOString();

/** DIR-relative path of a recording's note: YYYY/MM/<id>.md by its capture time (UTC). */
export function notePath(row: Pick<RecordingRow, 'id' | 'recorded_at'>): string {
  const d = new Date(row.recorded_at);
  return `${d.getUTCFullYear().toString().padStart(4, '0')}/${(d.getUTCMonth() + 1).toString().padStart(2, '0')}/${row.id}.md`;
}

/** The first lines of every note reclib writes: a file without them is never touched by an export. */
export const noteStart = (id: string): string => `---\nid: ${yamlString(id)}\n`;

export function recordingMarkdown(row: RecordingRow): string {
  const front = [
    noteStart(row.id) + `type: ${row.type}`,
    `title: ${yamlString(row.title)}`,
    `recordedAt: ${iso(row.recorded_at)}`,
    `updatedAt: ${iso(row.updated_at)}`,
    `deviceId: ${row.device_id === null ? 'null' : yamlString(row.device_id)}`,
    `pinned: ${row.pinned === 1}`,
    `status: ${row.status}`,
    '---',
  ].join('\n');
  const parts = [front];
  if (row.title.trim()) parts.push(`# ${row.title.replace(/\s*\n\s*/g, ' ').trim()}`);
  parts.push('## Summary', row.summary.trim() || '_No summary._');
  parts.push('## Transcript', row.transcript.trim() || '_No transcript._');
  return parts.join('\n\n') + '\n';
}
