import { serviceConfig } from '../service-config.js';

export default serviceConfig('identity');
