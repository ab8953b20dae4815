import { Type } from '@sinclair/typebox'
import { NonBlankString, PageQuerySchema } from '../../schemas/common.js'

export const ListExclusionsQuerySchema = Type.Composite([
  PageQuerySchema,
  Type.Object({ client_id: NonBlankString(200) })
])
