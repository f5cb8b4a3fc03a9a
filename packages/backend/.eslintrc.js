module.exports = require('@backstage/cli/config/eslint-factory')(__dirname, {
  rules: {
    // The end-to-end tests also assert by waiting for an observable state.
    'jest/expect-expect': [
      'warn',
      { assertFunctionNames: ['expect', 'waitFor', 'waitForEntity', 'waitForNoEntity'] },
    ],
  },
});
