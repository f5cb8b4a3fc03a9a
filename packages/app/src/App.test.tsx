import { render, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { DEV_USER_STORAGE_KEY } from './modules/signIn/DevSignInPage';

const config = {
  app: {
    title: 'Test',
    baseUrl: 'http://localhost:3000',
    devSignIn: {
      users: [
        { name: 'alice', description: 'API consumer' },
        { name: 'erin', description: 'No portal role' },
      ],
    },
  },
  backend: { baseUrl: 'http://localhost:7007' },
};

describe('the development app', () => {
  beforeEach(() => {
    process.env = {
      ...process.env,
      APP_CONFIG: [{ data: config, context: 'test' }] as any,
    };
    sessionStorage.clear();
  });

  it('offers the configured fixture users on its sign-in page outside production builds', async () => {
    const { default: App } = await import('./App');
    render(App.createRoot());
    expect(await screen.findByRole('heading', { name: 'Sign in (development)' })).toBeVisible();
    const users = screen.getByRole('list', { name: 'Fixture users' });
    expect(users).toHaveTextContent('API consumer');
    expect(screen.getByRole('button', { name: 'Sign in as erin' })).toBeVisible();
    // Choosing a user remembers it for this tab only, then signs in through oauth2-proxy (which
    // this test cannot reach: no backend runs here).
    await userEvent.click(screen.getByRole('button', { name: 'Sign in as alice' }));
    expect(sessionStorage.getItem(DEV_USER_STORAGE_KEY)).toBe('alice');
    expect(localStorage.getItem(DEV_USER_STORAGE_KEY)).toBeNull();
  });

  it('signs in through the oauth2-proxy only in a production build', async () => {
    const env = process.env as Record<string, string | undefined>;
    const original = env.NODE_ENV;
    const pageFor = async (nodeEnv: string) => {
      env.NODE_ENV = nodeEnv;
      let loader: () => Promise<{ name: string }> = async () => ({ name: '' });
      jest.isolateModules(() => {
        loader = require('./modules/signIn').loadSignInPage;
      });
      return (await loader()).name;
    };
    try {
      expect(await pageFor('production')).toBe('ProxySignInPage');
      expect(await pageFor('development')).toBe('DevSignInPage');
    } finally {
      env.NODE_ENV = original;
    }
  });
});
