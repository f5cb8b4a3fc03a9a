import { screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { portalApiRef } from '../../apis/PortalApi';
import {
  apiKey,
  fakePortalApi,
  mcpProduct,
  permissions,
  product,
  rejecting,
  serverError,
} from '../../__testUtils__/fakes';
import { renderPortal } from '../../__testUtils__/renderPortal';
import { RequestAccessDialog } from './RequestAccessDialog';
import { MAX_USE_CASE_LENGTH } from './RequestFields';

describe('RequestAccessDialog (fake portal API)', () => {
  it('sends the chosen plan and use case, counting characters as one types', async () => {
    const onRequested = jest.fn();
    const created = apiKey({ name: 'toystore-abc', product: 'toystore', phase: 'Pending' });
    const portal = fakePortalApi({ createRequest: jest.fn(async () => created) });
    await renderPortal(
      <RequestAccessDialog
        product={product({ name: 'toystore', displayName: 'Toystore' })}
        isOpen
        onOpenChange={() => {}}
        onRequested={onRequested}
      />,
      { apis: [[portalApiRef, portal], permissions()] },
    );
    const dialog = await screen.findByRole('dialog', { name: 'Request access to Toystore' });
    expect(dialog).toBeInTheDocument();
    expect(screen.queryByText('Approved automatically')).not.toBeInTheDocument();
    const useCase = screen.getByRole('textbox', { name: 'Use case' });
    await userEvent.type(useCase, 'Nightly sync');
    expect(screen.getByText(`12/${MAX_USE_CASE_LENGTH} characters`)).toBeInTheDocument();
    expect(useCase).toHaveAttribute('maxlength', String(MAX_USE_CASE_LENGTH));
    await userEvent.click(screen.getByRole('button', { name: 'Send request' }));
    expect(await screen.findByText('Request sent')).toBeInTheDocument();
    expect(portal.createRequest).toHaveBeenCalledWith({
      apiProductRef: { namespace: 'toystore', name: 'toystore' },
      planTier: 'gold',
      useCase: 'Nightly sync',
    });
    expect(onRequested).toHaveBeenCalledWith(created);
    expect(screen.getByRole('link', { name: 'Go to My keys' })).toHaveAttribute(
      'href',
      '/portal/keys',
    );
  });

  it('says before sending that a product approves requests automatically', async () => {
    const portal = fakePortalApi({
      createRequest: jest.fn(async () =>
        apiKey({ name: 'auto-1', product: 'auto', phase: 'Approved' }),
      ),
    });
    await renderPortal(
      <RequestAccessDialog
        product={product({ name: 'auto', displayName: 'Auto', approvalMode: 'automatic' })}
        isOpen
        onOpenChange={() => {}}
      />,
      { apis: [[portalApiRef, portal], permissions()] },
    );
    expect(await screen.findByText('Approved automatically')).toBeInTheDocument();
    await userEvent.click(screen.getByRole('button', { name: 'Send request' }));
    expect(await screen.findByText('Your key is approved')).toBeInTheDocument();
  });

  it("keeps the dialog open with the server's message when the request is refused", async () => {
    const refusal = await serverError(
      409,
      'You already have a Pending request for toystore/toystore on plan gold',
    );
    const portal = fakePortalApi({
      createRequest: rejecting(refusal),
    });
    await renderPortal(
      <RequestAccessDialog
        product={product({ name: 'toystore', displayName: 'Toystore' })}
        isOpen
        onOpenChange={() => {}}
      />,
      { apis: [[portalApiRef, portal], permissions()] },
    );
    await userEvent.click(await screen.findByRole('button', { name: 'Send request' }));
    const alert = await screen.findByRole('alert');
    expect(alert).toHaveTextContent('The request was not sent');
    expect(alert).toHaveTextContent(
      'You already have a Pending request for toystore/toystore on plan gold',
    );
    expect(screen.getByRole('button', { name: 'Send request' })).toBeInTheDocument();
  });

  it('asks for a tier by name when the product has no plans', async () => {
    const portal = fakePortalApi({
      createRequest: jest.fn(async () => apiKey({ name: 'k', product: 'plain' })),
    });
    await renderPortal(
      <RequestAccessDialog
        product={product({ name: 'plain', displayName: 'Plain', plans: [] })}
        isOpen
        onOpenChange={() => {}}
      />,
      { apis: [[portalApiRef, portal], permissions()] },
    );
    const send = await screen.findByRole('button', { name: 'Send request' });
    expect(send).toBeDisabled();
    await userEvent.type(screen.getByRole('textbox', { name: 'Plan tier' }), 'basic');
    await userEvent.click(send);
    await screen.findByText('Request sent');
    expect(portal.createRequest).toHaveBeenCalledWith(
      expect.objectContaining({ planTier: 'basic' }),
    );
  });

  it("shows an MCP product's quotas beside each plan and says that no key is issued", async () => {
    const portal = fakePortalApi({
      createRequest: jest.fn(async () =>
        apiKey({ name: 'example-tools-x', namespace: 'mcp', product: 'example-tools' }),
      ),
    });
    await renderPortal(
      <RequestAccessDialog
        product={mcpProduct({ name: 'example-tools', displayName: 'Example tools' })}
        isOpen
        onOpenChange={() => {}}
      />,
      { apis: [[portalApiRef, portal], permissions()] },
    );
    const dialog = await screen.findByRole('dialog', { name: 'Request access to Example tools' });
    expect(dialog).toHaveTextContent(
      'No key is issued: you use the MCP broker with your own sign-in. Your tools appear in your IDE as soon as the request is approved.',
    );
    await userEvent.click(screen.getByRole('button', { name: /Plan/ }));
    expect(await screen.findByRole('option', { name: /bronze/ })).toHaveTextContent(
      'To try things out · 5 tool calls per day (UTC)',
    );
    const gold = screen.getByRole('option', { name: /gold/ });
    expect(gold).toHaveTextContent('100 tool calls per day (UTC); 10 calls of deploy* per minute');
    await userEvent.click(gold);
    await userEvent.click(screen.getByRole('button', { name: 'Send request' }));
    expect(await screen.findByText('Request sent')).toBeInTheDocument();
    expect(portal.createRequest).toHaveBeenCalledWith({
      apiProductRef: { namespace: 'mcp', name: 'example-tools' },
      planTier: 'gold',
    });
  });

  it('says that access is granted at once for an MCP product approving automatically', async () => {
    const portal = fakePortalApi({
      createRequest: jest.fn(async () =>
        apiKey({ name: 'auto-1', namespace: 'mcp', product: 'auto', phase: 'Approved' }),
      ),
    });
    await renderPortal(
      <RequestAccessDialog
        product={mcpProduct({ name: 'auto', displayName: 'Auto', approvalMode: 'automatic' })}
        isOpen
        onOpenChange={() => {}}
      />,
      { apis: [[portalApiRef, portal], permissions()] },
    );
    expect(await screen.findByText(/access is granted at once/)).toBeInTheDocument();
    await userEvent.click(screen.getByRole('button', { name: 'Send request' }));
    expect(await screen.findByText('You have access')).toBeInTheDocument();
    expect(screen.queryByText(/Reveal its secret/)).not.toBeInTheDocument();
  });
});
