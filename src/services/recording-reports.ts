// v1 reports of the importing application (docs/decisions.md §7, §21): its processing state with
// capture metadata (which may arrive after the transcript and is fixed once set) and its local
// audio references. Only the application that imported a recording may report on it. A report
// that repeats what is stored changes nothing (no revision, no event), like a no-op edit.
import type { Core } from '../context';
import { AppError } from '../errors';
import type { Principal } from '../permissions';
import { checkCaptureMetadata, type InputMappings } from './capture-metadata';
import { checkProcessingMove } from './processing-status';
import { checkAudioId, checkOpaqueId } from './recording-input';
import { audioRefs, checkRevision, type RecordingRow, type RecordingStatus } from './recording-model';

export interface ProcessingReport {
  status: RecordingStatus;
  message?: string | undefined;
  captureInput?: string | undefined;
  deviceId?: string | undefined;
}

export interface AudioReport {
  clientId: string;
  fileId: string;
  available: boolean;
}

/** What the reports need of RecordingService. */
export interface ReportTarget {
  /** The live recording of the caller's account (404, 410). */
  get(principal: Principal, id: string): RecordingRow;
  /** Stores a changed row with its recording.updated event and change hooks, in the current transaction. */
  saveChange(before: RecordingRow, after: RecordingRow, now: number): void;
}

export class RecordingReports {
  constructor(
    private readonly core: Core,
    private readonly target: ReportTarget,
    private readonly mappings: InputMappings,
  ) {}

  processing(principal: Principal, id: string, report: ProcessingReport, expectedRevision?: number): RecordingRow {
    if (report.captureInput !== undefined) checkOpaqueId('captureInput', report.captureInput);
    if (report.deviceId !== undefined) checkOpaqueId('deviceId', report.deviceId);
    return this.core.writer.write(() => {
      const before = this.own(principal, id, expectedRevision);
      checkProcessingMove(before.status, report.status);
      const after: RecordingRow = { ...before, status: report.status, processing_message: report.message ?? null };
      for (const [field, column] of [['captureInput', 'capture_input'], ['deviceId', 'device_id']] as const) {
        const value = report[field];
        if (value === undefined || value === before[column]) continue;
        if (before[column] !== null) throw new AppError('immutable_field', `${field}: capture metadata is fixed once set`);
        after[column] = value;
        // Capture metadata reported by the app itself makes this a native capture.
        if (principal.kind === 'session') after.native = 1;
      }
      // Capture metadata the report sets passes the device/input check of a create.
      if (after.capture_input !== before.capture_input || after.device_id !== before.device_id) {
        checkCaptureMetadata(this.mappings, principal, { deviceId: after.device_id, captureInput: after.capture_input });
      }
      return this.save(before, after);
    });
  }

  /** Adds (available) or removes one local-file reference of a memo. */
  audio(principal: Principal, id: string, ref: AudioReport, expectedRevision?: number): RecordingRow {
    // Removing a reference takes any well-formed id, so one stored under older rules can still go.
    const check = ref.available ? checkAudioId : checkOpaqueId;
    check('clientId', ref.clientId);
    check('fileId', ref.fileId);
    return this.core.writer.write(() => {
      const before = this.own(principal, id, expectedRevision);
      if (before.type === 'clip') throw new AppError('not_editable', 'a clip keeps no audio; audio references are for memos only');
      const known = audioRefs(before);
      // Reporting a known reference again keeps it as it is (reportedAt = when it was first reported).
      if (ref.available && known.some((a) => a.clientId === ref.clientId && a.fileId === ref.fileId)) return before;
      const refs = known.filter((a) => a.clientId !== ref.clientId || a.fileId !== ref.fileId);
      if (ref.available) refs.push({ clientId: ref.clientId, fileId: ref.fileId, reportedAt: this.core.writer.now });
      return this.save(before, { ...before, audio: JSON.stringify(refs) });
    });
  }

  private own(principal: Principal, id: string, expectedRevision: number | undefined): RecordingRow {
    const row = this.target.get(principal, id);
    if (row.integration_id !== principal.integrationId) {
      throw new AppError('wrong_application', 'only the application that imported this recording may report its processing and audio');
    }
    if (expectedRevision !== undefined) checkRevision(row, expectedRevision);
    return row;
  }

  private save(before: RecordingRow, after: RecordingRow): RecordingRow {
    const reported = ['status', 'processing_message', 'capture_input', 'device_id', 'audio'] as const;
    if (reported.every((f) => after[f] === before[f])) return before;
    const now = this.core.writer.now;
    after.processing_updated_at = now;
    after.revision = before.revision + 1;
    after.updated_at = now;
    this.target.saveChange(before, after, now);
    return after;
  }
}
