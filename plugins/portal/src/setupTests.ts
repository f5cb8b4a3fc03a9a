import '@testing-library/jest-dom';
import { configure } from '@testing-library/react';

// A whole test app renders per test (react-aria, the app's APIs, lazily loaded pages): on a busy
// 2-core machine the first render of a file alone can take several seconds. findBy* and waitFor
// still return as soon as what they wait for appears.
configure({ asyncUtilTimeout: 15_000 });
jest.setTimeout(60_000);
