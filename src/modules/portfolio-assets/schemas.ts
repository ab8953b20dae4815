import { Type } from '@sinclair/typebox'
import { AssetTypeSchema } from '../../schemas/asset.js'
import { IdSchema } from '../../schemas/common.js'

export const AssetTypeParamsSchema = Type.Object({ type: AssetTypeSchema })

/** `/portfolio-assets/:id/transactions/:transactionId`. */
export const TransactionParamsSchema = Type.Object({ id: IdSchema, transactionId: IdSchema })
