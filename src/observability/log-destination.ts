import { write, writeSync } from 'node:fs'

/** What pino writes lines to. */
export interface LineSink {
  write: (text: string) => void
  flushSync: () => void
}

/** Room for the lines of a busy turn (about 50 access lines of 400 bytes); grows when a turn needs more. */
const CHUNK_BYTES = 64 * 1024
/** Lines go out once this many bytes wait (about 40 access lines)… */
const FLUSH_BYTES = 16 * 1024
/** …or once the first of them has waited this long. */
const FLUSH_MS = 10
/** How long a write waits when the pipe is full (EAGAIN) before it tries again. */
const FULL_PIPE_RETRY_MS = 10

/**
 * Standard output for log lines: each line is encoded into a buffer as it is logged, and the
 * lines go out together in one asynchronous `fs.write` (the system call runs on one of libuv's
 * threads, not the event loop) once 16 KiB wait or 10 ms after the first of them, two buffers
 * taking turns: one filling while the other is written. Measured against pino's asynchronous
 * destination (sonic-boom) fed the lines of a turn as one string, which joined them and copied
 * the result again to write it, and against a pino transport (a worker thread), which costs more
 * on a single core (BENCHMARKS.md, issue 46). Lines stay in order; on exit, crash included, what
 * is not written yet goes out synchronously, a chunk waiting out a full pipe first; a write in
 * flight at that moment is one the system call is finishing, as with sonic-boom. Only a process
 * killed outright (SIGKILL, out of memory) loses lines: those of its last 10 ms.
 */
export function standardOutputLines (fd = 1): LineSink {
  let filling = Buffer.allocUnsafeSlow(CHUNK_BYTES)
  let spare = Buffer.allocUnsafeSlow(CHUNK_BYTES)
  let used = 0
  let writing = false
  let flushTimer: NodeJS.Timeout | undefined
  /** The rest of a chunk waiting out a full pipe: written first by flushSync, so nothing is lost or reordered. */
  let waiting: { chunk: Buffer<ArrayBuffer>, from: number, to: number, retry: NodeJS.Timeout } | undefined

  const writeOut = (chunk: Buffer<ArrayBuffer>, from: number, to: number): void => {
    write(fd, chunk, from, to - from, null, (error, written) => {
      if (error !== null) {
        // A full non-blocking pipe: try again shortly. Anything else (stdout closed) ends the
        // process as an unwritable stdout did with pino's destination.
        if (error.code !== 'EAGAIN') throw error
        const retry = setTimeout(() => {
          waiting = undefined
          writeOut(chunk, from, to)
        }, FULL_PIPE_RETRY_MS)
        waiting = { chunk, from, to, retry }
        return
      }
      if (from + written < to) writeOut(chunk, from + written, to)
      else writtenOut(chunk)
    })
  }

  /** A chunk is out: it becomes the spare, and what filled meanwhile goes next. */
  function writtenOut (chunk: Buffer<ArrayBuffer>): void {
    spare = chunk
    writing = false
    if (used >= FLUSH_BYTES) handOver()
    else if (used > 0) flushTimer ??= setTimeout(handOver, FLUSH_MS)
  }

  function handOver (): void {
    if (flushTimer !== undefined) {
      clearTimeout(flushTimer)
      flushTimer = undefined
    }
    if (writing || used === 0) return
    const chunk = filling
    const length = used
    filling = spare
    used = 0
    writing = true
    writeOut(chunk, 0, length)
  }

  const flushSync = (): void => {
    if (waiting !== undefined) {
      const { chunk, from, to, retry } = waiting
      clearTimeout(retry)
      waiting = undefined
      writeAllSync(fd, chunk.subarray(from, to))
      writtenOut(chunk)
    }
    const length = used
    used = 0
    writeAllSync(fd, filling.subarray(0, length))
  }
  process.on('exit', flushSync)

  return {
    write: line => {
      // At most three bytes per UTF-16 unit: measure exactly only when that bound does not fit.
      if (used + line.length * 3 > filling.length) {
        const needed = used + Buffer.byteLength(line)
        if (needed > filling.length) {
          const larger = Buffer.allocUnsafeSlow(Math.max(needed, filling.length * 2))
          filling.copy(larger, 0, 0, used)
          filling = larger
        }
      }
      used += filling.write(line, used)
      if (used >= FLUSH_BYTES) {
        if (!writing) handOver()
      } else flushTimer ??= setTimeout(handOver, FLUSH_MS)
    },
    flushSync
  }
}

/** Writes all of `bytes`, waiting out a full pipe (EAGAIN) as pino's destination does. */
function writeAllSync (fd: number, bytes: Buffer): void {
  let rest = bytes
  while (rest.length > 0) {
    try {
      rest = rest.subarray(writeSync(fd, rest))
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') throw error
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10)
    }
  }
}
