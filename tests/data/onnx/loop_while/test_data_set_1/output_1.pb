
Bv_allJPÒŽÑ?]Ñ?+]@Õ]@VàÅ@_ÄÅ@Ah$AHS$A1NƒAv>ƒAIõÌA°ÝÌA÷·BD¦Bò“pBgypBön¶B[¶B8Ó	CJÄ	C