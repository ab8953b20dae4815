import { Type } from '@sinclair/typebox'
import { AssetTypeSchema } from '../../schemas/asset.js'

export const AssetTypeParamsSchema = Type.Object({ type: AssetTypeSchema })
