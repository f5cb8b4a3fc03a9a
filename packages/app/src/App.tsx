/*
 * The development app (Backstage's new frontend system). Its plugins come from its package.json
 * by feature discovery (`app.packages: all`): the catalog, notifications and signals, the auth
 * plugin's OAuth consent page (/oauth2/authorize/:sessionId), user settings, org pages and the
 * portal plugin. The app's own modules add the sidebar and the sign-in page: in a development
 * build a chooser of the fixture users, in a production build the oauth2-proxy sign-in only (the
 * development one is not in that bundle at all).
 */
import { createApp } from '@backstage/frontend-defaults';
import { navModule } from './modules/nav';
import { signInModule } from './modules/signIn';

export default createApp({
  features: [navModule, signInModule],
});
