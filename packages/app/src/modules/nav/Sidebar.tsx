/* The app's sidebar: the catalog and the portal's pages first, then everything else. */
import {
  Sidebar,
  SidebarDivider,
  SidebarGroup,
  SidebarItem,
  SidebarScrollWrapper,
  SidebarSpace,
} from '@backstage/core-components';
import { NavContentBlueprint } from '@backstage/plugin-app-react';
import { UserSettingsSignInAvatar } from '@backstage/plugin-user-settings';
import { RiMenuLine } from '@remixicon/react';

export const SidebarContent = NavContentBlueprint.make({
  params: {
    component: ({ navItems }) => {
      const nav = navItems.withComponent(item => (
        <SidebarItem icon={() => item.icon} to={item.href} text={item.title} />
      ));
      nav.take('page:app/home');
      return (
        <Sidebar>
          <SidebarGroup label="Menu" icon={<RiMenuLine />}>
            {nav.take('page:catalog')}
            {nav.take('page:portal')}
            {nav.take('page:portal/mcp')}
            {nav.take('page:portal/connections')}
            <SidebarDivider />
            <SidebarScrollWrapper>{nav.rest({ sortBy: 'title' })}</SidebarScrollWrapper>
          </SidebarGroup>
          <SidebarSpace />
          <SidebarDivider />
          {/* The plain page item: the notifications plugin's own sidebar item (with the unread
              count) has an accessible name that leaves out its visible count (axe: serious). */}
          {nav.take('page:notifications')}
          <SidebarDivider />
          <SidebarGroup label="Settings" icon={<UserSettingsSignInAvatar />} to="/settings">
            {nav.take('page:user-settings')}
          </SidebarGroup>
        </Sidebar>
      );
    },
  },
});
