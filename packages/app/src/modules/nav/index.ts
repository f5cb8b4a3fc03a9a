import { createFrontendModule } from '@backstage/frontend-plugin-api';
import { homeRedirect } from './HomeRedirect';
import { SidebarContent } from './Sidebar';

/** The app's navigation: the sidebar, and `/` leading to the portal. */
export const navModule = createFrontendModule({
  pluginId: 'app',
  extensions: [SidebarContent, homeRedirect],
});
