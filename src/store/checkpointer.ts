import { createRequire } from 'node:module'
import { Worker } from 'node:worker_threads'
import type { Database as SqliteDatabase } from 'better-sqlite3'

/** How often the checkpointer copies committed WAL pages into the database file. */
const CHECKPOINT_INTERVAL_MS = 200
/** SQLite's own default, restored if the checkpointer stops: the WAL must never grow unchecked. */
const AUTOCHECKPOINT_PAGES = 1000

/**
 * The worker's whole program, given as source so that it needs no file of its own (the server is
 * bundled). A PASSIVE checkpoint never blocks the writer: it copies what it can and leaves the rest.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads')
const Database = require(workerData.driver)
const db = new Database(workerData.file)
db.pragma('busy_timeout = 5000')
const checkpoint = () => { db.pragma('wal_checkpoint(PASSIVE)') }
const timer = setInterval(checkpoint, workerData.intervalMs)
parentPort.on('message', () => {
  clearInterval(timer)
  checkpoint()
  db.close()
  parentPort.close()
})
`

export interface Checkpointer {
  /** Ends the worker after a last checkpoint; the database file stays consistent if it is cut short. */
  stop: () => Promise<void>
}

/**
 * WAL checkpoints off the event loop. With SQLite's automatic checkpoints, every thousandth page
 * committed makes that commit copy the WAL into the database and fsync both, on the thread that
 * serves requests: under a stream of creates the event loop sat blocked in fsync about a tenth of
 * the time. Here the committing connection only appends to the WAL (durable across a process crash
 * with `synchronous = NORMAL`, as before), and a worker thread with a connection of its own
 * checkpoints. If the worker fails, automatic checkpoints come back.
 */
export function startCheckpointer (
  database: SqliteDatabase,
  file: string,
  onFailure: (error: unknown) => void
): Checkpointer {
  database.pragma('wal_autocheckpoint = 0')
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: {
      driver: createRequire(import.meta.url).resolve('better-sqlite3'),
      file,
      intervalMs: CHECKPOINT_INTERVAL_MS
    },
    // A thread that only runs checkpoints: a small heap.
    resourceLimits: { maxOldGenerationSizeMb: 16, maxYoungGenerationSizeMb: 4 }
  })
  worker.unref()
  const exited = new Promise<void>(resolve => worker.once('exit', () => { resolve() }))
  worker.once('error', error => {
    if (database.open) database.pragma(`wal_autocheckpoint = ${AUTOCHECKPOINT_PAGES}`)
    onFailure(error)
  })
  return {
    stop: async () => {
      // Held open until the last checkpoint is done and the worker's connection closed.
      worker.ref()
      worker.postMessage('stop')
      await exited
    }
  }
}
