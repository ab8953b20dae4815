import { writeSync } from 'node:fs'

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
/** How long lines wait when the pipe is full (EAGAIN) before a write tries again. */
const FULL_PIPE_RETRY_MS = 10

/**
 * Standard output for log lines: each line is encoded into one buffer as it is logged, and the
 * lines go out together in one `fs.writeSync` once 16 KiB wait or 10 ms after the first of them
 * (BENCHMARKS.md: pino's destination joined a turn's lines and copied them again).
 * The write is synchronous on purpose: the bytes written are then always known, so an exit or a
 * crash writes exactly the rest, whole lines in order. An asynchronous write on one of libuv's
 * threads cannot promise that: a full non-blocking pipe takes part of a chunk, and a process that
 * exits before the callback runs loses the rest and cuts a line in two. A stdout opened blocking
 * (a file, a pipe nobody made non-blocking) that cannot keep up slows the service, as pino's
 * default destination does; a non-blocking one that is full (EAGAIN) keeps the lines in memory
 * and tries again every 10 ms. Only a process killed outright (SIGKILL, out of memory) loses
 * lines: those of its last 10 ms.
 */
export function standardOutputLines (fd = 1): LineSink {
  let buffer = Buffer.allocUnsafeSlow(CHUNK_BYTES)
  /** The first byte not written yet… */
  let start = 0
  /** …and the end of the lines encoded. */
  let end = 0
  let flushTimer: NodeJS.Timeout | undefined
  /** The pipe was full at the last write: lines wait for the retry, however many arrive. */
  let pipeFull = false
  /** Standard output cannot be written (closed): the process is ending, nothing more is tried. */
  let broken = false

  function flush (): void {
    if (flushTimer !== undefined) {
      clearTimeout(flushTimer)
      flushTimer = undefined
    }
    pipeFull = false
    while (start < end && !broken) {
      try {
        start += writeSync(fd, buffer, start, end - start)
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'EAGAIN') {
          pipeFull = true
          flushTimer = setTimeout(flush, FULL_PIPE_RETRY_MS)
          return
        }
        // Anything else (stdout closed) ends the process, as an unwritable stdout did with
        // pino's destination; thrown on its own turn, never into the code that logged.
        broken = true
        process.nextTick(() => { throw error })
      }
    }
    start = 0
    end = 0
  }

  /** Room for `bytes` more after `end`: the unwritten rest moved to the front, the buffer grown if need be. */
  function makeRoom (bytes: number): void {
    if (end + bytes <= buffer.length) return
    const waiting = end - start
    const target = waiting + bytes > buffer.length
      ? Buffer.allocUnsafeSlow(Math.max(waiting + bytes, buffer.length * 2))
      : buffer
    buffer.copy(target, 0, start, end)
    buffer = target
    start = 0
    end = waiting
  }

  const flushSync = (): void => {
    if (flushTimer !== undefined) clearTimeout(flushTimer)
    flushTimer = undefined
    if (broken) return
    writeAllSync(fd, buffer.subarray(start, end))
    start = 0
    end = 0
  }
  process.on('exit', flushSync)

  return {
    write: line => {
      // At most three bytes per UTF-16 unit: measure exactly only when that bound does not fit.
      if (end + line.length * 3 > buffer.length) makeRoom(Buffer.byteLength(line))
      end += buffer.write(line, end)
      if (pipeFull || broken) return
      if (end - start >= FLUSH_BYTES) flush()
      else flushTimer ??= setTimeout(flush, FLUSH_MS)
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
