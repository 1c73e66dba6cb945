// A write that puts every byte in place or throws. fs.writeSync returns how many bytes it wrote,
// and on a nearly full disk (or at a file size limit) that may be fewer than asked, without an
// error: only the next write fails (ENOSPC, EFBIG). A caller that ignored the count renamed a
// truncated export over the last good one and reported success.
import fs from 'node:fs';

/** A failed write, its message naming the file in words a person can act on ("cannot write …: no space left on device"). */
export class WriteError extends Error {
  constructor(
    readonly file: string,
    /** The system's error code (ENOSPC, EFBIG, EIO…). */
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Writes all of `data` to `fd` (at `position` onwards when given, else at the file's current
 * offset). `file` names the file in the error: the one the caller is writing, which may be the
 * final name of a temporary file.
 */
export function writeAllSync(fd: number, data: Uint8Array, file: string, position?: number): void {
  let done = 0;
  while (done < data.length) {
    let n: number;
    try {
      n = fs.writeSync(fd, data, done, data.length - done, position === undefined ? null : position + done);
    } catch (e) {
      throw writeError(e as NodeJS.ErrnoException, file);
    }
    // write(2) returns 0 only for an empty request; looping on it would never end.
    if (n === 0) throw new WriteError(file, 'EIO', `cannot write ${file}: the system wrote nothing`);
    done += n;
  }
}

function writeError(e: NodeJS.ErrnoException, file: string): WriteError {
  return new WriteError(file, e.code ?? 'EIO', `cannot write ${file}: ${writeFailureReason(e)}`);
}

/** Why a write failed, in words: Node's "ENOSPC: no space left on device, write" is "no space left on device". */
export function writeFailureReason(e: NodeJS.ErrnoException): string {
  const code = e.code ?? '';
  return code !== '' && e.message.startsWith(`${code}: `) ? e.message.slice(code.length + 2).replace(/, write$/, '') : e.message;
}
