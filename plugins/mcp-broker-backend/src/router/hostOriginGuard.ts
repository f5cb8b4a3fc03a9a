/*
 * DNS rebinding protection: a web page on another site must not reach the broker through a
 * browser by pointing its own host name at this machine. Requests must name an allowed Host,
 * and when a browser sends an Origin it must be an allowed one. Non-browser clients send no
 * Origin and pass.
 */
import type { Request, Response } from 'express';
import type { DnsRebindingProtectionConfig } from '../config';
import { JsonRpcErrorCode } from '../protocol/jsonRpc';
import { ResponseWriter } from './ResponseWriter';

function hostName(hostHeader: string): string {
  // "[::1]:7007" → "[::1]", "localhost:7007" → "localhost"
  if (hostHeader.startsWith('['))
    return hostHeader.slice(0, hostHeader.indexOf(']') + 1).toLowerCase();
  return hostHeader.split(':')[0].toLowerCase();
}

/**
 * Enforces the configured Host and Origin allow-lists: false when the request was refused (403,
 * answered).
 */
export function checkHostOrigin(
  config: DnsRebindingProtectionConfig,
  req: Request,
  res: Response,
): boolean {
  if (!config.enabled) return true;
  const host = req.headers.host;
  if (host === undefined || !config.allowedHosts.has(hostName(host))) {
    new ResponseWriter(res).refuse(
      403,
      JsonRpcErrorCode.InvalidRequest,
      `Host "${String(host ?? '').slice(0, 100)}" is not allowed; add it to mcpBroker.dnsRebindingProtection.allowedHosts`,
    );
    return false;
  }
  const origin = req.headers.origin;
  if (origin !== undefined && !config.allowedOrigins.has(origin)) {
    new ResponseWriter(res).refuse(
      403,
      JsonRpcErrorCode.InvalidRequest,
      `Origin "${origin.slice(0, 100)}" is not allowed; add it to mcpBroker.dnsRebindingProtection.allowedOrigins`,
    );
    return false;
  }
  return true;
}
