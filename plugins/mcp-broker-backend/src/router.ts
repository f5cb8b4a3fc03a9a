import express from 'express';
import Router from 'express-promise-router';

/** Builds the broker's Express router. */
export async function createRouter(): Promise<express.Router> {
  const router = Router();
  router.get('/health', (_req, res) => {
    res.json({ status: 'ok' });
  });
  return router;
}
