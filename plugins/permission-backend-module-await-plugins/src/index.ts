/**
 * A module of the permission plugin that starts the RBAC plugin only once every plugin named in
 * `permission.rbac.pluginsWithPermission` is up, so RBAC 6.1.0 never skips a plugin's
 * conditional policies because it read that plugin's permission metadata too early.
 *
 * @packageDocumentation
 */
export { permissionModuleAwaitPlugins as default, PLUGIN_WAIT_MS } from './module';
