// The owner hands the organization to another member (docs/api.md#organizations): the new owner
// holds every power, the old one becomes an admin. Account deletion asks owners to do this first.
import { useState } from 'react';
import { toProblem } from '../../api/errors';
import { useLoad, useSession } from '../../api/hooks';
import { api } from '../../api/session';
import { Form, SelectField, Submit, useSubmit } from '../../ui/form';
import { Section } from '../../ui/Shell';

/** `onDone` gets the new owner's name: the caller is an admin from then on, and this section goes away. */
export function TransferOwnership({ orgId, onDone }: { orgId: string; onDone: (newOwner: string) => void }) {
  const session = useSession();
  const me = session.status === 'signed-in' ? session.user.id : null;
  const members = useLoad(`members:${orgId}`, () =>
    api.GET('/api/v1/organizations/{orgId}/members', { params: { path: { orgId }, query: { pageSize: 100 } } }),
  );
  const others = (members.data?.members ?? []).filter((m) => m.userId !== me);
  const [chosen, setChosen] = useState('');
  const { busy, problem, run } = useSubmit();
  const memberId = chosen || others[0]?.id || '';
  const submit = () =>
    run(async () => {
      const { data, error } = await api.POST('/api/v1/organizations/{orgId}/transfer-ownership', {
        params: { path: { orgId } },
        body: { memberId },
      });
      if (error) return toProblem(error, { VALIDATION_ERROR: 'memberId', NOT_FOUND: 'memberId' });
      onDone(data.owner.user.fullName ?? data.owner.user.email);
      return null;
    });
  return (
    <Section title="Transfer ownership">
      {others.length === 0 && members.data ? (
        <p>Invite someone first: ownership goes to another member.</p>
      ) : (
        <Form onSubmit={() => void submit()} problem={problem} fields={['memberId']} label="Transfer ownership">
          <p>
            The new owner can delete the organization and transfer it again; you become an admin. Owners transfer before
            deleting their account.
          </p>
          <SelectField
            label="New owner"
            value={memberId}
            onChange={setChosen}
            options={others.map(
              (m) => [m.id, `${m.user.fullName ?? m.user.email} (${m.user.email}, ${m.role})`] as const,
            )}
            error={problem?.fields.memberId}
          />
          <div className="actions">
            <Submit busy={busy} className="danger">
              Transfer ownership
            </Submit>
          </div>
        </Form>
      )}
    </Section>
  );
}
