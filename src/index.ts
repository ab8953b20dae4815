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
export { default as authRoutesPlugin, type AuthModuleOptions } from './modules/auth/index.js'
export { default as systemPlugin, type SystemModuleOptions } from './modules/system/index.js'
export { default as portfoliosPlugin } from './modules/portfolios/index.js'
export { default as portfolioAssetsPlugin } from './modules/portfolio-assets/index.js'
export { default as excludedTransactionsPlugin } from './modules/openfinance-excluded-transactions/index.js'
export { default as storePlugin, type StorePluginOptions } from './plugins/store.js'
export { Store, type StoreOptions } from './store/store.js'
export { default as quotesPlugin, type QuotesPluginOptions } from './plugins/quotes.js'
export { buildDashboard, type Dashboard, type DashboardInput, type Lot } from './dashboard/dashboard.js'
export type { QuoteProvider, Quote, MonthlyClose } from './quotes/provider.js'
export { default as upstreamsPlugin, type UpstreamsPluginOptions } from './plugins/upstreams.js'
export { default as backendApiPlugin, type BackendApiModuleOptions } from './modules/backend-api/index.js'
export { default as aggregatorPlugin, type AggregatorModuleOptions } from './modules/aggregator/index.js'
export * as errors from './errors.js'
