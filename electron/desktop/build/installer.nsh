; Included by electron-builder's NSIS installer (electron-builder.yml nsis.include).
; tel: and callto: links open the softphone from the first install on, before the app has run
; once (electron/desktop/dial-links.ts registers the same keys at run time). The app is also
; listed as a handler of both in Windows' "Default apps by protocol", where the agent picks it.
; SHELL_CONTEXT is the current user's hive (perMachine: false), HKLM for a per-machine install.

!macro softphoneRegisterScheme SCHEME
  WriteRegStr SHELL_CONTEXT "Software\Classes\${SCHEME}" "" "URL:${PRODUCT_NAME} phone call link"
  WriteRegStr SHELL_CONTEXT "Software\Classes\${SCHEME}" "URL Protocol" ""
  WriteRegStr SHELL_CONTEXT "Software\Classes\${SCHEME}\DefaultIcon" "" "$\"$appExe$\",0"
  WriteRegStr SHELL_CONTEXT "Software\Classes\${SCHEME}\shell\open\command" "" "$\"$appExe$\" $\"%1$\""
  WriteRegStr SHELL_CONTEXT "Software\${PRODUCT_NAME}\Capabilities\URLAssociations" "${SCHEME}" "${PRODUCT_NAME}.${SCHEME}"
  WriteRegStr SHELL_CONTEXT "Software\Classes\${PRODUCT_NAME}.${SCHEME}" "" "${PRODUCT_NAME} phone call link"
  WriteRegStr SHELL_CONTEXT "Software\Classes\${PRODUCT_NAME}.${SCHEME}\shell\open\command" "" "$\"$appExe$\" $\"%1$\""
!macroend

; Only keys that still name this app: another softphone may have taken the scheme since.
!macro softphoneUnregisterScheme SCHEME
  ReadRegStr $0 SHELL_CONTEXT "Software\Classes\${SCHEME}\shell\open\command" ""
  StrCmp $0 "$\"$INSTDIR\${APP_EXECUTABLE_FILENAME}$\" $\"%1$\"" 0 +2
    DeleteRegKey SHELL_CONTEXT "Software\Classes\${SCHEME}"
  DeleteRegKey SHELL_CONTEXT "Software\Classes\${PRODUCT_NAME}.${SCHEME}"
!macroend

!macro customInstall
  !insertmacro softphoneRegisterScheme "tel"
  !insertmacro softphoneRegisterScheme "callto"
  WriteRegStr SHELL_CONTEXT "Software\${PRODUCT_NAME}\Capabilities" "ApplicationName" "${PRODUCT_NAME}"
  WriteRegStr SHELL_CONTEXT "Software\${PRODUCT_NAME}\Capabilities" "ApplicationDescription" "Softphone for business voice calls"
  WriteRegStr SHELL_CONTEXT "Software\RegisteredApplications" "${PRODUCT_NAME}" "Software\${PRODUCT_NAME}\Capabilities"
!macroend

!macro customUnInstall
  ; An update uninstalls the old version first: the new one registers the same keys right after.
  ${ifNot} ${isUpdated}
    !insertmacro softphoneUnregisterScheme "tel"
    !insertmacro softphoneUnregisterScheme "callto"
    DeleteRegValue SHELL_CONTEXT "Software\RegisteredApplications" "${PRODUCT_NAME}"
    DeleteRegKey SHELL_CONTEXT "Software\${PRODUCT_NAME}\Capabilities"
  ${endIf}
!macroend
