import t from 'tap'
import { setTimeout } from 'node:timers/promises'
import pg from 'pg'
import { Store } from '../../src/store/store.js'
import { freshStore, NEEDS_POSTGRES, testNeeding } from '../helper.js'

/*
 * Kysely's bookkeeping check before migrating lists the tables of every schema by name; a schema
 * dropped meanwhile by another store's owner (parallel test files on one database, or an operator)
 * failed the start with `schema "…" does not exist` (3F000), a table another store's migration
 * drops with `relation "….…" does not exist` (42P01). The start runs it again instead.
 */
testNeeding(t, 'a store starts while other schemas and tables of its database are created and dropped',
  [NEEDS_POSTGRES],
  async t => {
    const url = new URL(process.env.DATABASE_URL ?? '')
    url.searchParams.delete('options')
    const churn = new pg.Client({ connectionString: url.href })
    await churn.connect()
    const state = { running: true }
    const churning = (async () => {
      for (let round = 0; state.running; round++) {
        const schema = `churn_${process.pid}_${round}`
        await churn.query(`create schema ${schema}`)
        await churn.query(`create table ${schema}.a (id int primary key, b text, c text, d text)`)
        await churn.query(`create table ${schema}.e (id int primary key, f text)`)
        await churn.query(`drop table ${schema}.a`)
        await churn.query(`drop schema ${schema} cascade`)
        // A drop now and then, as another store's owner would: not one on every catalog read.
        await setTimeout(20)
      }
    })()
    try {
      for (let start = 0; start < 40; start++) {
        const store = await Store.open(...await freshStore(t, 'postgres'))
        await store.close()
      }
      t.pass('40 starts, none failed on a schema dropped meanwhile')
    } finally {
      state.running = false
      await churning
      await churn.end()
    }
  })
