import type { BaseLogger, Bindings, ChildLoggerOptions } from 'pino'

type LogLevels = 'level' | 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent'

/**
 * The request's logger, which the domain hands on to the adapters so that their lines carry the
 * request's id: pino's, as Fastify's `request.log` is (the domain names no Fastify type).
 */
export interface Log extends Pick<BaseLogger, LogLevels> {
  child (bindings: Bindings, options?: ChildLoggerOptions): Log
}
