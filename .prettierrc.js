// Backstage's Prettier settings with our house line width (STYLE.md: lines at most 100 columns).
module.exports = {
  ...require('@backstage/cli/config/prettier.json'),
  printWidth: 100,
};
