import type { Stats } from '../schemas/stats.js'
import type { Access } from './access.js'
import type { DataStore } from './ports.js'

/** System statistics (docs/api.md#resources), behind the API key. */
export class StatsService {
  constructor (private readonly stats: DataStore['stats']) {}

  async get (access: Access): Promise<Stats> {
    await access.apiKey()
    return await this.stats.get()
  }
}
