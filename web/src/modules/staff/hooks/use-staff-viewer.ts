import { useOutletContext } from 'react-router';
import type { StaffViewer } from '../graphql/staff-viewer.query.ts';

/** The signed-in staff member, for pages inside the admin layout (which renders them only for staff). */
export function useStaffViewer(): StaffViewer {
  return useOutletContext<{ viewer: StaffViewer }>().viewer;
}
