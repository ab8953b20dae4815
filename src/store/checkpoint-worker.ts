/*
 * The checkpointer's worker thread (checkpointer.ts): a connection of its own to the SQLite file,
 * which copies committed WAL pages into the database every `intervalMs`, and on any message makes
 * a last checkpoint, truncates the WAL and ends. A PASSIVE checkpoint never blocks the writer: it
 * copies what it can and leaves the rest.
 */
import { parentPort, workerData } from 'node:worker_threads'
import Database from 'better-sqlite3'

/** What the checkpointer hands its worker. */
export interface CheckpointWorkerData {
  file: string
  intervalMs: number
}

const { file, intervalMs } = workerData as CheckpointWorkerData
const db = new Database(file)
db.pragma('busy_timeout = 5000')
const timer = setInterval(() => { db.pragma('wal_checkpoint(PASSIVE)') }, intervalMs)
parentPort?.once('message', () => {
  clearInterval(timer)
  db.pragma('wal_checkpoint(TRUNCATE)')
  db.close()
  parentPort?.close()
})
