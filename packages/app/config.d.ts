export interface Config {
  app?: {
    /**
     * Sign-in as a chosen catalog user, for development only: the sign-in page of a development
     * build (`yarn start`) offers these users and signs in through the oauth2-proxy provider,
     * naming the user in `X-Forwarded-User`. A production build has no such page, whatever the
     * configuration says.
     *
     * @deepVisibility frontend
     */
    devSignIn?: {
      /** The users offered, by catalog name (namespace `default`). */
      users?: Array<{
        name: string;
        /** What the user stands for in the fixture, e.g. "API consumer". */
        description?: string;
      }>;
    };
  };
}
