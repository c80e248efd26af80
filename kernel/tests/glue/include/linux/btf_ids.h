#include "../../kapi.h"
