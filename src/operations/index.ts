import { aggregatorOperations } from './aggregator.js'
import { assetFieldOperations } from './asset-fields.js'
import { assetTransactionOperations } from './asset-transactions.js'
import { authOperations } from './auth.js'
import { excludedTransactionOperations } from './excluded-transactions.js'
import type { Operation } from './operation.js'
import { portfolioAssetOperations } from './portfolio-assets.js'
import { portfolioImportOperations } from './portfolio-imports.js'
import { portfolioValuationOperations } from './portfolio-valuation.js'
import { portfolioOperations } from './portfolios.js'
import { systemOperations } from './system.js'

/**
 * Every declared operation, in the order GraphQL lists its fields (`schema.graphql`): each file's
 * in its own order. REST registers each file's from its module, in the file's order.
 */
export const OPERATIONS: readonly Operation[] = [
  ...portfolioOperations,
  ...aggregatorOperations,
  ...portfolioValuationOperations,
  ...portfolioImportOperations,
  ...portfolioAssetOperations,
  ...assetFieldOperations,
  ...assetTransactionOperations,
  ...systemOperations,
  ...authOperations,
  ...excludedTransactionOperations
]
