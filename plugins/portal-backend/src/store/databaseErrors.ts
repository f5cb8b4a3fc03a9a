import {
  ConflictError,
  InputError,
  NotFoundError,
  ServiceUnavailableError,
  isError,
} from '@backstage/errors';
import { NODE_NETWORK_ERROR_CODES } from '@devportal/backend-kubernetes-client';

/** What a database error means to the portal, independent of the engine. */
export type DatabaseErrorKind =
  'unique-violation' | 'foreign-key-violation' | 'invalid-value' | 'unavailable';

// PostgreSQL class 22 codes a client can cause: a value longer than its column, a
// number out of range, text that is not a number.
const PG_INVALID_VALUE_CODES = new Set(['22001', '22003', '22P02']);

// PostgreSQL SQLSTATE codes: class 08 = connection exception, 53 = insufficient
// resources, 57P0x = server shutting down, 57014 = statement timeout / cancel,
// 40001/40P01 = serialization failure / deadlock (safe to retry).
const PG_UNAVAILABLE_CODES = new Set([
  '53000',
  '53100',
  '53200',
  '53300',
  '57P01',
  '57P02',
  '57P03',
  '57014',
  '40001',
  '40P01',
]);
const SQLITE_UNAVAILABLE_CODES = new Set([
  'SQLITE_BUSY',
  'SQLITE_LOCKED',
  'SQLITE_CANTOPEN',
  'SQLITE_IOERR',
  'SQLITE_FULL',
]);
// Messages of knex and pg when no connection can be had (pool timeout, destroyed pool,
// connection dropped mid-query); they carry no code.
const UNAVAILABLE_MESSAGES = [
  /Knex: Timeout acquiring a connection/i,
  /Unable to acquire a connection/i,
  /Connection terminated/i,
  /Client has encountered a connection error/i,
  /The database connection is not open/i,
];

/**
 * Classifies a knex / pg / better-sqlite3 error, or returns undefined when it is none of
 * the kinds the portal maps (a bug, which should surface as a 500).
 */
export function classifyDatabaseError(error: unknown): DatabaseErrorKind | undefined {
  if (!isError(error)) {
    return undefined;
  }
  const code = String((error as { code?: unknown }).code ?? '');
  if (
    code === '23505' ||
    code === 'SQLITE_CONSTRAINT_UNIQUE' ||
    code === 'SQLITE_CONSTRAINT_PRIMARYKEY'
  ) {
    return 'unique-violation';
  }
  if (code === '23503' || code === 'SQLITE_CONSTRAINT_FOREIGNKEY') {
    return 'foreign-key-violation';
  }
  if (PG_INVALID_VALUE_CODES.has(code)) {
    return 'invalid-value';
  }
  if (
    code.startsWith('08') ||
    PG_UNAVAILABLE_CODES.has(code) ||
    NODE_NETWORK_ERROR_CODES.has(code) ||
    SQLITE_UNAVAILABLE_CODES.has(code) ||
    error.name === 'KnexTimeoutError' ||
    UNAVAILABLE_MESSAGES.some(pattern => pattern.test(error.message))
  ) {
    return 'unavailable';
  }
  return undefined;
}

/** Messages for the constraint errors of one store operation. */
export interface DatabaseErrorMessages {
  /** Message of the ConflictError a unique violation becomes. */
  conflict?: string;
  /** Message of the NotFoundError a foreign-key violation becomes. */
  missingReference?: string;
}

/**
 * The one place where database errors become `@backstage/errors`: unique violations →
 * ConflictError, foreign-key violations → NotFoundError, values too long or out of
 * range → InputError, unreachable or overloaded
 * database → ServiceUnavailableError. Errors that are already Backstage errors, and
 * unknown errors (bugs), are returned as they are, minus any row values.
 *
 * The original message is not copied into mapped errors: driver messages may quote SQL
 * and constraint details that clients have no business seeing.
 */
export function mapDatabaseError(error: unknown, messages: DatabaseErrorMessages = {}): unknown {
  switch (classifyDatabaseError(error)) {
    case 'unique-violation':
      return new ConflictError(messages.conflict ?? 'The record already exists');
    case 'foreign-key-violation':
      return new NotFoundError(messages.missingReference ?? 'A referenced record does not exist');
    case 'invalid-value':
      return new InputError('A value is too long or out of range for the portal database');
    case 'unavailable':
      return new ServiceUnavailableError(
        'The portal database is unavailable or timed out; retry later',
      );
    default:
      return withoutRowDetail(error);
  }
}

/**
 * PostgreSQL puts the failing row's values in `detail` ("Failing row contains (…)"),
 * which for the secrets table would be the secret itself; error handlers log it.
 * The message (SQL with placeholders, constraint names) stays for debugging.
 */
function withoutRowDetail(error: unknown): unknown {
  if (isError(error) && 'detail' in error) {
    delete (error as { detail?: unknown }).detail;
  }
  return error;
}
