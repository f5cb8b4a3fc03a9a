/* `/` of the development app: the portal is what it is for. */
import { PageBlueprint } from '@backstage/frontend-plugin-api';
import { Navigate } from 'react-router-dom';

export const homeRedirect = PageBlueprint.make({
  name: 'home',
  params: {
    path: '/',
    noHeader: true,
    loader: async () => <Navigate to="/portal" replace />,
  },
});
