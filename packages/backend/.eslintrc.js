module.exports = require('@backstage/cli/config/eslint-factory')(__dirname, {
  rules: {
    // The end-to-end tests also assert by waiting for an observable state, or through shared
    // helpers named expect* (e.g. expectCancelReachesBackend).
    'jest/expect-expect': [
      'warn',
      {
        assertFunctionNames: ['expect', 'expect*', 'waitFor', 'waitForEntity', 'waitForNoEntity'],
      },
    ],
  },
});
