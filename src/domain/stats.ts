import type { Stats } from '../schemas/stats.js'
import type { StatsRepository } from '../store/stats.js'
import type { Access } from './access.js'

/** System statistics (docs/api.md#resources), behind the API key. */
export class StatsService {
  constructor (private readonly stats: StatsRepository) {}

  async get (access: Access): Promise<Stats> {
    await access.apiKey()
    return await this.stats.get()
  }
}
