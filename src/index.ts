/** What other Fastify applications may import: the app factory, the plugins, their option types and schemas. */
export { buildApp, authOptions, type App } from './app.js'
export { loadConfig, ConfigSchema, ConfigError, type AppConfig } from './config.js'
export {
  default as authPlugin,
  providerConfig,
  requirePrincipal,
  JwtPayloadSchema,
  type AuthPluginOptions,
  type Principal,
  type PrincipalType,
  type ProviderConfig,
  type JwtPayload
} from './plugins/auth.js'
export { default as errorResponsesPlugin, ErrorBodySchema, errorSchemas, type ErrorBody } from './plugins/error-responses.js'
export { default as authModule, type AuthModuleOptions } from './modules/auth/index.js'
export { default as systemModule } from './modules/system/index.js'
export * as errors from './errors.js'
