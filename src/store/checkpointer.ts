import { extname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Worker } from 'node:worker_threads'
import type { Database as SqliteDatabase } from 'better-sqlite3'
import type { DependencyHealth } from '../observability/dependencies.js'
import type { CheckpointWorkerData } from './checkpoint-worker.js'

/** How often the checkpointer copies committed WAL pages into the database file. */
const CHECKPOINT_INTERVAL_MS = 200
/** SQLite's own default, restored if the checkpointer stops: the WAL must never grow unchecked. */
const AUTOCHECKPOINT_PAGES = 1000
/**
 * WAL pages (4 KiB each) at which the serving connection checkpoints after all. PASSIVE checkpoints
 * copy pages but never rewind the WAL, and under a steady stream of writes one of them never ends
 * on the last frame at the instant a write begins: the WAL would only grow (1.6 GB after ten
 * minutes of creates; a RESTART from the worker starves, as writes keep winning the lock). So the
 * serving connection keeps SQLite's automatic checkpoint, at eight times its default: when it
 * runs, the worker has already copied nearly every page, the checkpoint ends on the last frame,
 * and the next write starts the WAL from its beginning.
 */
const REWIND_PAGES = 8192
/** A rewound WAL is truncated to this size, so one burst of writes does not keep its disk space. */
const WAL_SIZE_LIMIT_BYTES = REWIND_PAGES * 4096

/**
 * The worker's program (checkpoint-worker.ts), beside this module: `src/store` under tsx in the
 * tests, `dist/store` in the library build, and `dist/chunks` in the server's bundle, where
 * `npm run build:worker` writes it beside the chunk that holds this code.
 */
const WORKER_FILE = new URL(`./checkpoint-worker${extname(fileURLToPath(import.meta.url))}`, import.meta.url)

export interface Checkpointer {
  /** Ends the worker after a last checkpoint; the database file stays consistent if it is cut short. */
  stop: () => Promise<void>
}

/** A failed worker starts again after 1 s, doubling up to 60 s: a disk that stays full costs a thread a minute. */
const RESTART_DELAY_MS = { first: 1000, max: 60_000 }
/** A restarted worker that has run this long without failing counts as recovered. */
const RECOVERED_AFTER_MS = 5 * CHECKPOINT_INTERVAL_MS

/**
 * WAL checkpoints off the event loop. With SQLite's automatic checkpoints, every thousandth page
 * committed makes that commit copy the WAL into the database and fsync both, on the thread that
 * serves requests: under a stream of creates the event loop sat blocked in fsync about a tenth of
 * the time. Here a worker thread with a connection of its own copies committed pages every
 * 200 ms, and the serving connection checkpoints only every {@link REWIND_PAGES} pages, finding
 * little left to copy, to rewind the WAL. Commits stay durable across a process crash
 * (`synchronous = NORMAL`, as before). If the worker fails (the disk full, the file gone),
 * SQLite's default comes back and the worker is started again later, with capped backoff.
 */
export function startCheckpointer (
  database: SqliteDatabase,
  file: string,
  health?: DependencyHealth
): Checkpointer {
  database.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`)
  let stopped = false
  let restartDelayMs = RESTART_DELAY_MS.first
  let restart: NodeJS.Timeout | undefined
  const start = (): { worker: Worker, exited: Promise<void> } => {
    database.pragma(`wal_autocheckpoint = ${REWIND_PAGES}`)
    const workerData: CheckpointWorkerData = { file, intervalMs: CHECKPOINT_INTERVAL_MS }
    const worker = new Worker(WORKER_FILE, {
      workerData,
      // A thread that only runs checkpoints: a small heap, and none of the process's loaders (a test
      // runner's would not fit in it; Node strips the types of the source file itself under tsx).
      execArgv: [],
      resourceLimits: { maxOldGenerationSizeMb: 16, maxYoungGenerationSizeMb: 4 }
    })
    worker.unref()
    const exited = new Promise<void>(resolve => worker.once('exit', () => { resolve() }))
    const recovered = setTimeout(() => {
      restartDelayMs = RESTART_DELAY_MS.first
      health?.up()
    }, RECOVERED_AFTER_MS).unref()
    worker.once('error', error => {
      clearTimeout(recovered)
      if (database.open) database.pragma(`wal_autocheckpoint = ${AUTOCHECKPOINT_PAGES}`)
      health?.down(error)
      if (stopped) return
      restart = setTimeout(() => { if (!stopped && database.open) current = start() }, restartDelayMs).unref()
      restartDelayMs = Math.min(restartDelayMs * 2, RESTART_DELAY_MS.max)
    })
    return { worker, exited }
  }
  let current = start()
  return {
    stop: async () => {
      stopped = true
      clearTimeout(restart)
      // Held open until the last checkpoint is done and the worker's connection closed.
      current.worker.ref()
      current.worker.postMessage('stop')
      await current.exited
    }
  }
}
