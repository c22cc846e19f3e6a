import { createContext, useContext } from 'react';
import type { SoftphoneController } from './softphone-controller';

export const ControllerContext = createContext<SoftphoneController | null>(null);

export function useController(): SoftphoneController {
  const controller = useContext(ControllerContext);
  if (!controller) throw new Error('useController outside ControllerContext');
  return controller;
}
