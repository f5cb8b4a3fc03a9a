/*
 * The portal page's own paths below its mount point (`/portal` by default; the app may move it).
 * Links inside the page are built from the base the page was mounted at, so they work wherever
 * the app puts it and in the legacy system alike.
 */
import type { ObjectRef } from '@devportal/plugin-portal-common';
import { createContext, useContext } from 'react';

/** The portal page's paths, absolute (the mount point included). */
export interface PortalPaths {
  catalog: string;
  keys: string;
  approvals: string;
  /** Every key a person oversees (admins: all; owners: their products'). */
  allKeys: string;
  policies: string;
  newProduct: (route?: ObjectRef) => string;
  /** Product creation with an MCP server preselected. */
  newMcpProduct: (server: string) => string;
  product: (ref: ObjectRef) => string;
}

/** Paths under `base` (e.g. `/portal`). */
export function portalPaths(base: string): PortalPaths {
  const root = base.replace(/\/$/, '');
  const segment = (text: string) => encodeURIComponent(text);
  return {
    catalog: root === '' ? '/' : root,
    keys: `${root}/keys`,
    approvals: `${root}/approvals`,
    allKeys: `${root}/all-keys`,
    policies: `${root}/policies`,
    newProduct: route =>
      route === undefined
        ? `${root}/products/new`
        : `${root}/products/new?namespace=${segment(route.namespace)}&route=${segment(route.name)}`,
    newMcpProduct: server => `${root}/products/new?server=${segment(server)}`,
    product: ref => `${root}/products/${segment(ref.namespace)}/${segment(ref.name)}`,
  };
}

const PortalPathsContext = createContext<PortalPaths>(portalPaths('/portal'));

/** Provides the portal page's paths to the pages below it. */
export const PortalPathsProvider = PortalPathsContext.Provider;

/** The portal page's paths (default mount point `/portal` outside the page). */
export function usePortalPaths(): PortalPaths {
  return useContext(PortalPathsContext);
}
